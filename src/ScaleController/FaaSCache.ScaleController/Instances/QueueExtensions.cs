namespace FaaSCache.ScaleController.Instances;

/// <summary>The recently ended instances both instance sources list after the running ones.</summary>
internal static class QueueExtensions
{
    /// <summary>Adds <paramref name="item"/> and drops the oldest items beyond the last <paramref name="kept"/>.</summary>
    public static void EnqueueKeepingLast<T>(this Queue<T> queue, T item, int kept)
    {
        queue.Enqueue(item);
        while (queue.Count > kept)
        {
            _ = queue.Dequeue();
        }
    }
}
