"""A project's own minimal user model: a unique e-mail as the username, no name, no dates, no image;
one field of its own (``favorite_color``), which tests/test_additional_fields.py declares as an
additional field stored in the model."""

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.db import models


class EmailUserManager(BaseUserManager):
    def create_user(self, email, password=None, **extra):
        user = self.model(email=self.normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user


class EmailUser(AbstractBaseUser):
    email = models.EmailField(unique=True)
    is_active = models.BooleanField(default=True)
    favorite_color = models.CharField(max_length=40, blank=True, default="")

    objects = EmailUserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
