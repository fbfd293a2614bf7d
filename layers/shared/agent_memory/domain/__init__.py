"""The domain's records and rules: scopes, notes, the document, the fence and redaction, the commands
the use cases take and the answers' shapes. Nothing here does I/O."""
