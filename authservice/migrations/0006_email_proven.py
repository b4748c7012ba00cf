"""``email_verified_at``: when control of the address was first proven (authservice.flows.email_proof).

Accounts verified before this migration count as proven since they were created: what they hold was set
up by their owner as far as anyone can now tell, and a later proof must not retire it.
"""

from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def grandfather_verified(apps, schema_editor):
    if settings.AUTH_USER_MODEL.lower() == "authservice.user":
        apps.get_model("authservice", "User").objects.filter(email_verified=True, email_verified_at=None) \
            .update(email_verified_at=F("created_at"))
    apps.get_model("authservice", "AuthProfile").objects.filter(email_verified=True, email_verified_at=None) \
        .update(email_verified_at=F("created_at"))


class Migration(migrations.Migration):

    dependencies = [
        ('authservice', '0005_passkey'),
    ]

    operations = [
        migrations.AddField(
            model_name='authprofile',
            name='email_verified_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='user',
            name='email_verified_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(grandfather_verified, migrations.RunPython.noop),
    ]
