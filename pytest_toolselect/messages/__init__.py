"""What the user is told: the error type, every mistake at once, counts in words, masking."""
