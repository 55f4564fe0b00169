"""tau-ARGUS jobs: metadata, hierarchies, codelists, recodes, tabular input, a-priori and
batch files, read into the toolkit's objects and written back."""
