using FaaSCache.Testing;
using Xunit;

namespace FaaSCache.Peers.Tests;

[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
