"""Failure clusters: a fingerprint of why each result failed, the same failure grouped across servers per SDK
version, the release notes that explain it, and the upstream report the platform team can file."""
