using Xunit.Sdk;

namespace FaaSCache.Testing;

/// <summary>
/// A theory's data: each consistency preset by its host.json name, strongest first (<see cref="ReliabilityHistories.Presets"/>),
/// one test case per preset as <c>[InlineData("strong")]</c> ... <c>[InlineData("localAsync")]</c> would give.
/// </summary>
public sealed class EveryPresetAttribute : DataAttribute
{
    public override IEnumerable<object[]> GetData(MethodInfo testMethod) => ReliabilityHistories.Presets.Select(preset => new object[] { preset });
}
