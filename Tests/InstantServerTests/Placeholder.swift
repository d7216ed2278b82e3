// Tests for InstantServer.
