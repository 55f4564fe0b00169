"""Table formats: JJ (tau-ARGUS / sdcTable interchange); CSV files as the toolkit reads them."""
