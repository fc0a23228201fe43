namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class VoteAggregatorTests
{
    [Fact]
    public void Scales_out_when_any_voter_of_any_instance_wants_out()
    {
        AggregatedVote vote = VoteAggregator.Aggregate(
            [Votes.Of("a-1", ("compute", -1, null), ("cacheSize", -1, null)), Votes.Of("a-2", ("compute", -1, null), ("cacheSize", 1, null))],
            current: 2);

        Assert.Equal(ScaleDirection.Out, vote.Direction);
        Assert.Equal(3, vote.Target);
        Assert.Contains("a-2/cacheSize", vote.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Scales_in_only_when_every_vote_is_in()
    {
        AggregatedVote oneAbstains = VoteAggregator.Aggregate([Votes.Of("a-1", ("compute", -1, null), ("bandwidth", 0, null)), Votes.Of("a-2", ("compute", -1, null))], current: 2);
        AggregatedVote allIn = VoteAggregator.Aggregate([Votes.Of("a-1", ("compute", -1, null), ("bandwidth", -1, null)), Votes.Of("a-2", ("compute", -1, null))], current: 2);

        Assert.Equal(ScaleDirection.None, oneAbstains.Direction);
        Assert.Equal(2, oneAbstains.Target);
        Assert.Equal(ScaleDirection.In, allIn.Direction);
        Assert.Equal(1, allIn.Target);
    }

    [Fact]
    public void Out_voters_targets_combine_by_max()
    {
        AggregatedVote vote = VoteAggregator.Aggregate(
            [Votes.Of("a-1", ("bandwidth", 1, 4), ("compute", 1, null)), Votes.Of("a-2", ("bandwidth", 1, 6), ("compute", -1, 1))],
            current: 2);

        Assert.Equal(ScaleDirection.Out, vote.Direction);
        Assert.Equal(6, vote.Target);
    }

    [Fact]
    public void An_out_vote_whose_target_is_met_still_asks_for_one_more()
    {
        AggregatedVote vote = VoteAggregator.Aggregate([Votes.Of("a-1", ("compute", 1, 2))], current: 3);

        Assert.Equal(4, vote.Target);
    }

    [Fact]
    public void No_votes_keep_the_count()
    {
        AggregatedVote vote = VoteAggregator.Aggregate([], current: 3);

        Assert.Equal(ScaleDirection.None, vote.Direction);
        Assert.Equal(3, vote.Target);
    }
}
