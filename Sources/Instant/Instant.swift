// Instant: the client SDK; this file is replaced as the module grows.
