// Tests for Instant.
