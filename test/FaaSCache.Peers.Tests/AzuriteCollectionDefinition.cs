using FaaSCache.TestSupport;
using Xunit;

namespace FaaSCache.Peers.Tests;

[CollectionDefinition(AzuriteCollection.Name)]
public sealed class AzuriteCollectionDefinition : AzuriteCollection;
