// Tests for InstantPDF.
