"""The binding JSON the real azure-functions library (1.22.0b4) produced for the reference app of
/work/shared/reference/worker-indexing.md §2, verbatim: copy_blob = HTTP GET on route copy/{name}, anonymous,
blob input in/{name} (BINARY), blob output out/{name}, HTTP response as return value; on_blob = blob trigger on
in/{name}, from a Blueprint. Our azure.functions and the worker's indexing must give exactly these strings."""

COPY_BLOB_RAW_BINDINGS = [
    '{"direction": "OUT", "type": "blob", "name": "dst", "path": "out/{name}", "connection": "AzureWebJobsStorage"}',
    '{"direction": "IN", "dataType": "BINARY", "type": "blob", "name": "src", "path": "in/{name}", '
    '"connection": "AzureWebJobsStorage"}',
    '{"direction": "IN", "type": "httpTrigger", "name": "req", "methods": ["GET"], "authLevel": "ANONYMOUS", '
    '"route": "copy/{name}"}',
    '{"direction": "OUT", "type": "http", "name": "$return"}',
]

ON_BLOB_RAW_BINDINGS = [
    '{"direction": "IN", "type": "blobTrigger", "name": "myblob", "path": "in/{name}", "connection": "AzureWebJobsStorage"}',
]

# uuid5(NAMESPACE_OID, name), as the real worker's function ids.
FUNCTION_IDS = {
    "copy_blob": "5f2e3be2-1858-5c16-9570-c80b8ba0ead5",
    "on_blob": "afedf94d-d76c-56e3-965a-500a106c2fca",
    "Tick": "72cc919d-19a7-5318-bfdf-6f340dd45d14",
    "Hello": "540bcf3d-66b4-55ec-86d2-f759823f1edf",
}
