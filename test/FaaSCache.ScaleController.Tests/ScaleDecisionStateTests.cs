namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class ScaleDecisionStateTests
{
    [Fact]
    public void Publishes_the_desired_count_activity_and_reason_and_says_when_they_change()
    {
        var publisher = new ScaleDecisionState(new ScaleControllerOptions { AppName = "app" });
        ScaleDecisionState state = publisher;
        int changes = 0;
        state.Changed += (_, _) => changes++;
        DateTimeOffset t = DateTimeOffset.UnixEpoch;

        publisher.Update(new ScaleDecision(t, ScaleTrigger.FrontDoor, 0, 1, "scale from zero"), pendingRequests: 1);
        publisher.Update(new ScaleDecision(t, ScaleTrigger.Poll, 1, 1, "none: busy"), pendingRequests: 3);
        Assert.Equal(1, changes);
        Assert.Equal(1, state.DesiredInstances);
        Assert.True(state.IsActive);
        Assert.Equal("none: busy", state.Reason);

        publisher.Update(new ScaleDecision(t, ScaleTrigger.Poll, 1, 0, "idle"), pendingRequests: 0);
        Assert.Equal(2, changes);
        Assert.Equal(0, state.DesiredInstances);
        Assert.False(state.IsActive);
        Assert.Equal("app", state.AppName);
    }
}
