namespace FaaSCache.Testing;

/// <summary>
/// The base of the test classes of the "Azurite" collection: deriving from it puts a class in the collection, as
/// <c>[Collection(AzuriteCollection.Name)]</c> on the class would, so it shares the collection's one
/// <see cref="AzuriteFixture"/>, taken as a constructor parameter:
/// <code>public sealed class BlobTests(AzuriteFixture azurite) : AzuriteTests</code>
/// </summary>
[Collection(AzuriteCollection.Name)]
public abstract class AzuriteTests;
