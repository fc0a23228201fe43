namespace FaaSCache.Peers.Tests;

/// <summary>One Azurite for every test class of this assembly in the "Azurite" collection (see <see cref="AzuriteTests"/>).</summary>
[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
