"""Binding type names, as function.json and the host spell them."""

HTTP_TRIGGER = "httpTrigger"
HTTP_OUTPUT = "http"
BLOB_TRIGGER = "blobTrigger"
BLOB = "blob"
TIMER_TRIGGER = "timerTrigger"
QUEUE_TRIGGER = "queueTrigger"
QUEUE = "queue"
