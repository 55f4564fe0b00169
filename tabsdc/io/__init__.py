"""Table formats: JJ (tau-ARGUS / sdcTable interchange)."""
