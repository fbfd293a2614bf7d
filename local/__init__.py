"""The local stack (``make run``) and the template reading that the tests share with it."""
