using FaaSCache.Testing;

namespace FaaSCache.ScaleController.Tests;

/// <summary>The test assembly's declaration of the shared Azurite collection.</summary>
[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
