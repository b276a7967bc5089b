"""The contract: the generated models and what every writer and reader shares (canonical
form, statuses and exit codes, errors, timestamps)."""
