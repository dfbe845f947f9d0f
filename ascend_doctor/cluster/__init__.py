"""Cluster scale: node reports written so they can be merged, their merge, and `collect` bundles."""
