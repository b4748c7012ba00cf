from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("authservice", "0006_email_proven"),
    ]

    operations = [
        # Sessions made before this column existed get "": not SSO, so required_for applies to them.
        migrations.AddField(
            model_name="session",
            name="sign_in_method",
            field=models.CharField(default="", max_length=32),
        ),
    ]
