"""ScimUserTotal and, on PostgreSQL, the triggers that keep it (sso/scim/models.py says why).

Statement-level triggers with transition tables: a bulk insert of 5,000 users is one update of the total,
not 5,000. A decrease only updates an existing row (never inserts a negative one), so a flush that empties
sso_scimusertotal before sso_scimuser leaves nothing behind.
"""

import django.db.models.deletion
from django.db import migrations, models

FUNCTION = """
CREATE FUNCTION sso_scim_user_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO sso_scimusertotal AS total (connection_id, live)
        SELECT connection_id, count(*) FROM new_rows WHERE NOT deleted GROUP BY connection_id ORDER BY connection_id
        ON CONFLICT (connection_id) DO UPDATE SET live = total.live + EXCLUDED.live;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE sso_scimusertotal AS total SET live = total.live - gone.n
        FROM (SELECT connection_id, count(*) AS n FROM old_rows WHERE NOT deleted GROUP BY connection_id
              ORDER BY connection_id) AS gone
        WHERE total.connection_id = gone.connection_id;
    ELSE  -- UPDATE: a user deleted or brought back, or (never through the app) moved to another connection
        WITH delta AS (
            SELECT connection_id, sum(n) AS n FROM (
                SELECT connection_id, 1 AS n FROM new_rows WHERE NOT deleted
                UNION ALL
                SELECT connection_id, -1 FROM old_rows WHERE NOT deleted
            ) AS change GROUP BY connection_id HAVING sum(n) <> 0
        ), decreased AS (
            UPDATE sso_scimusertotal AS total SET live = total.live + delta.n FROM delta
            WHERE delta.n < 0 AND total.connection_id = delta.connection_id
        )
        INSERT INTO sso_scimusertotal AS total (connection_id, live)
        SELECT connection_id, n FROM delta WHERE n > 0 ORDER BY connection_id
        ON CONFLICT (connection_id) DO UPDATE SET live = total.live + EXCLUDED.live;
    END IF;
    RETURN NULL;
END
$$;
"""
TRIGGERS = """
CREATE TRIGGER sso_scim_user_total_insert AFTER INSERT ON sso_scimuser
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sso_scim_user_total();
CREATE TRIGGER sso_scim_user_total_update AFTER UPDATE ON sso_scimuser
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sso_scim_user_total();
CREATE TRIGGER sso_scim_user_total_delete AFTER DELETE ON sso_scimuser
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION sso_scim_user_total();
"""
BACKFILL = """
INSERT INTO sso_scimusertotal (connection_id, live)
SELECT connection_id, count(*) FROM sso_scimuser WHERE NOT deleted GROUP BY connection_id;
"""
DROP = """
DROP TRIGGER IF EXISTS sso_scim_user_total_insert ON sso_scimuser;
DROP TRIGGER IF EXISTS sso_scim_user_total_update ON sso_scimuser;
DROP TRIGGER IF EXISTS sso_scim_user_total_delete ON sso_scimuser;
DROP FUNCTION IF EXISTS sso_scim_user_total();
"""


def create_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # The table is locked first so no user is written between the backfill and the triggers.
        schema_editor.execute("LOCK TABLE sso_scimuser IN SHARE ROW EXCLUSIVE MODE")
        schema_editor.execute(FUNCTION)
        schema_editor.execute(TRIGGERS)
        schema_editor.execute(BACKFILL)


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('sso', '0009_scim_user_live_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='ScimUserTotal',
            fields=[
                ('connection', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='user_total', serialize=False, to='sso.scimconnection')),
                ('live', models.BigIntegerField(default=0)),
            ],
            options={
                'verbose_name': 'SCIM user total',
            },
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
