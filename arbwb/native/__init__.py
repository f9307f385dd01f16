"""The C fast paths and their pure-Python fallbacks, chosen once per process."""
