from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sso', '0006_scim'),
    ]

    operations = [
        migrations.AddField(
            model_name='scimuser',
            name='deactivated_by_scim',
            field=models.BooleanField(default=False),
        ),
    ]
