using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Security.Logging;

/// <summary>Puts <see cref="RedactingLoggerProvider"/> in front of every logger provider registered so far.</summary>
public static class RedactionLoggingBuilderExtensions
{
    /// <summary>
    /// Wraps every <see cref="ILoggerProvider"/> registered so far (call it after the providers are added), and registers
    /// the <paramref name="redactor"/> as a service so that keys learnt later can be added to it.
    /// </summary>
    public static ILoggingBuilder AddSecretRedaction(this ILoggingBuilder logging, SecretRedactor redactor)
    {
        ArgumentNullException.ThrowIfNull(logging);
        ArgumentNullException.ThrowIfNull(redactor);
        IServiceCollection services = logging.Services;
        services.AddSingleton(redactor);
        ServiceDescriptor[] providers = [.. services.Where(d => d.ServiceType == typeof(ILoggerProvider) && !d.IsKeyedService)];
        foreach (ServiceDescriptor provider in providers)
        {
            services.Remove(provider);
            services.AddSingleton<ILoggerProvider>(sp => new RedactingLoggerProvider(Create(sp, provider), redactor));
        }

        return logging;
    }

    private static ILoggerProvider Create(IServiceProvider services, ServiceDescriptor descriptor) =>
        (ILoggerProvider)(descriptor.ImplementationInstance
            ?? descriptor.ImplementationFactory?.Invoke(services)
            ?? ActivatorUtilities.CreateInstance(services, descriptor.ImplementationType!));
}
