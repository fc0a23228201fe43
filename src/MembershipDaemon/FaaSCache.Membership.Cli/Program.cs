using FaaSCache.Membership.Cli;

using var cancel = new CancellationTokenSource();
Console.CancelKeyPress += (_, e) =>
{
    e.Cancel = true;
    cancel.Cancel();
};

return await MembershipCli.RunAsync(args, Console.Out, Console.Error, cancel.Token);
