"""Test-only formulations that plug into optkit through ``OPTKIT_FORMULATIONS``."""
