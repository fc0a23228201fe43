using FaaSCache.Testing;
using Xunit;

namespace FaaSCache.WebJobs.Tests;

/// <summary>One Azurite for every test class of this assembly marked <c>[Collection(AzuriteCollection.Name)]</c>.</summary>
[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
