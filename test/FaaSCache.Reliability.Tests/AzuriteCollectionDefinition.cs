using FaaSCache.Testing;

namespace FaaSCache.Reliability.Tests;

/// <summary>One Azurite for every test class of this assembly marked <c>[Collection(AzuriteCollection.Name)]</c>.</summary>
[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
