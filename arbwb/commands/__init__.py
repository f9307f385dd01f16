"""CLI subcommands: each module defines ``add_parser(subparsers)`` that sets ``func``."""
