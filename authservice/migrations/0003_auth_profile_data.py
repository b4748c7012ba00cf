from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('authservice', '0002_auth_profile'),
    ]

    operations = [
        migrations.AddField(
            model_name='authprofile',
            name='data',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
