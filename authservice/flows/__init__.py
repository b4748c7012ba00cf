"""The logic of each flow: plain functions of a context, raising APIError. No HTTP parsing here."""
