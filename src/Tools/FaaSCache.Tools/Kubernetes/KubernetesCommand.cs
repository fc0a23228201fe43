using System.CommandLine.Invocation;
using System.CommandLine.Parsing;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// <c>faascache kubernetes manifests</c>: the Kubernetes objects of an app folder (any programming model) on stdout, as Core
/// Tools' <c>func kubernetes deploy --dry-run</c> prints them, for host pods scaled by KEDA through the scale controller.
/// </summary>
public static class KubernetesCommand
{
    /// <summary>Creates the <c>kubernetes</c> command and its <c>manifests</c> subcommand.</summary>
    public static Command Create()
    {
        var scriptRoot = new Option<string>("--script-root") { Description = "The function app folder (host.json, local.settings.json). Default: the current folder." };
        var appName = new Option<string>("--app-name") { Description = "The app name, which names every object. Default: the folder's name (a C# build output: its assembly's), lowercased, as a DNS label." };
        var image = new Option<string>("--image") { Description = "The app image: a FaaSCache host image with the app copied to /home/site/wwwroot. Default: <name>:latest." };
        var controllerImage = new Option<string>("--controller-image") { Description = "The scale controller's image.", DefaultValueFactory = _ => KubernetesManifestOptions.DEFAULT_CONTROLLER_IMAGE };
        var replicas = new Option<int>("--replicas") { Description = "The host pods before KEDA scales them.", DefaultValueFactory = _ => KubernetesManifestOptions.DEFAULT_REPLICAS };
        var maxReplicas = new Option<int>("--max-replicas") { Description = "The most host pods (KEDA's maxReplicaCount, the controller's --max-instances; 1..64).", DefaultValueFactory = _ => KubernetesManifestOptions.DEFAULT_MAX_REPLICAS };
        var ns = new Option<string>("--namespace") { Description = "The namespace of every object.", DefaultValueFactory = _ => KubernetesManifestOptions.DEFAULT_NAMESPACE };
        var storage = new Option<string>("--storage") { Description = "The storage connection string the pods use (replaces local.settings.json's AzureWebJobsStorage; the development storage is not reachable from a pod)." };
        var noSecrets = new Option<bool>("--no-secrets") { Description = "Leave the settings and keys Secrets out (create them with kubectl; the output's header says how)." };
        var manifests = new Command("manifests", "Writes the app's Kubernetes objects to stdout as YAML: its settings and keys Secrets, the host Deployment and Service, the scale controller's Deployment and Service, and a KEDA ScaledObject.")
        {
            scriptRoot, appName, image, controllerImage, replicas, maxReplicas, ns, storage, noSecrets,
        };
        manifests.SetAction(result =>
        {
            TextWriter output = result.InvocationConfiguration.Output;
            TextWriter error = result.InvocationConfiguration.Error;
            try
            {
                string yaml = KubernetesManifestWriter.Write(new KubernetesManifestOptions
                {
                    ScriptRoot = result.GetValue(scriptRoot) ?? Directory.GetCurrentDirectory(),
                    AppName = result.GetValue(appName),
                    Image = result.GetValue(image),
                    ControllerImage = result.GetValue(controllerImage)!,
                    Replicas = result.GetValue(replicas),
                    MaxReplicas = result.GetValue(maxReplicas),
                    Namespace = result.GetValue(ns)!,
                    Storage = result.GetValue(storage),
                    NoSecrets = result.GetValue(noSecrets),
                });
                output.Write(yaml);
                return 0;
            }
            catch (Exception e) when (e is CommandLineException or FaaSCacheConfigurationException)
            {
                error.WriteLine($"faascache kubernetes manifests: {e.Message}");
                return 1;
            }
        });
        return new Command(Name, "Kubernetes deployment of a function app (FaaSCache host pods scaled by KEDA).") { manifests };
    }

    /// <summary>
    /// A command line of <c>kubernetes manifests</c> that does not parse says why on stderr only: its stdout is YAML, often
    /// redirected to a file, where the help text and typo corrections System.CommandLine prints there do not belong.
    /// </summary>
    public static void KeepOutputClean(ParseResult parsed)
    {
        ArgumentNullException.ThrowIfNull(parsed);
        if (parsed.Action is ParseErrorAction errors && parsed.CommandResult.Command.Name == "manifests" && parsed.CommandResult.Parent is CommandResult { Command.Name: Name })
        {
            errors.ShowHelp = false;
            errors.ShowTypoCorrections = false;
        }
    }

    private const string Name = "kubernetes";
}
