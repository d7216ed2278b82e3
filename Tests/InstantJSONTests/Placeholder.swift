// Tests for InstantJSON.
