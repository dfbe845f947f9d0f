"""The rule base: the rule schema, loading rules/*.yaml (+ --rules dirs), the YAML reader, the
category taxonomy and the environment-variable knowledge."""
