"""Watching a job live: its output passed through unchanged while the engine scans it
(`ascend-doctor run`, `diagnose - --tee`)."""
