from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sso', '0007_saml_session_name_id_digest'),
    ]

    operations = [
        migrations.AddField(
            model_name='scimuser',
            name='deactivated_by_scim',
            field=models.BooleanField(default=False),
        ),
    ]
