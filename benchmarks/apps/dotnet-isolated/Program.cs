using Microsoft.Extensions.Hosting;

// The isolated worker's entry point in the classic model: HTTP triggers arrive as RpcHttp inside FunctionRpc
// (HttpRequestData) and answer as RpcHttp (HttpResponseData); the worker runs no web server of its own.
IHost host = new HostBuilder()
    .ConfigureFunctionsWorkerDefaults()
    .Build();

host.Run();
