from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('email_user_app', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='emailuser',
            name='favorite_color',
            field=models.CharField(blank=True, default='', max_length=40),
        ),
    ]
