using Microsoft.Azure.Functions.Worker.Builder;
using Microsoft.Extensions.Hosting;

// The isolated worker's entry point, as `func init --worker-runtime dotnet-isolated` writes it.
FunctionsApplicationBuilder builder = FunctionsApplication.CreateBuilder(args);

builder.Build().Run();
