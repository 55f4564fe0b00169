"""Microdata information loss, disclosure risk and masking."""
