"""Bytes in, events out: the inputs (files, directories, stdin), log lines as events, the worker
processes and the progress bar."""
