// InstantServer: see the module's documentation comments; this file is replaced as the module grows.
