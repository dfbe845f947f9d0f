"""The command line: the console-script entry, the fast diagnose path, one module per command.

Nothing is imported here: `entry` runs a plain diagnosis without importing click.
"""
