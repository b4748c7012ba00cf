# SamlSession keeps the whole NameID and SessionIndex (never truncated) and indexes a SHA-256 of the
# NameID instead of the NameID itself (PostgreSQL's B-tree refuses rows over 2704 bytes).

import hashlib

from django.db import migrations, models


def fill_digests(apps, schema_editor):
    SamlSession = apps.get_model("sso", "SamlSession")
    for record in SamlSession.objects.only("pk", "name_id").iterator():
        digest = hashlib.sha256(record.name_id.encode("utf-8")).hexdigest()
        SamlSession.objects.filter(pk=record.pk).update(name_id_digest=digest)


class Migration(migrations.Migration):

    dependencies = [
        ('sso', '0006_scim'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='samlsession',
            name='sso_saml_session_name_id',
        ),
        migrations.AlterField(
            model_name='samlsession',
            name='name_id',
            field=models.TextField(),
        ),
        migrations.AlterField(
            model_name='samlsession',
            name='session_index',
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='samlsession',
            name='name_id_digest',
            field=models.CharField(default='', editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(fill_digests, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='samlsession',
            index=models.Index(fields=['provider', 'name_id_digest'], name='sso_saml_session_name_id_dg'),
        ),
    ]
