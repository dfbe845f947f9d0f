"""Events x rules -> matches: the rules' literals, the prefilter, the guarded pattern search, the
matcher, and the scanner that drives them over a byte stream (whole, or in parts)."""
