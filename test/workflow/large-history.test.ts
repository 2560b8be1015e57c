import { Client, Connection } from '@temporalio/client';
import { TEMPORAL_CHANNEL_ARGS } from '../../starter/run-options';
import { DATA_CONVERTER } from '../../workers/payload-codec';
import { fetchHistory } from '../../starter/replay/replay';
import { workflowEnvPerSuite } from '../support/workflow-env';

/*
 * A history over 4 MiB, as a run whose signals carry snapshots reaches before it continues as
 * new: `why`, `replay` and the chaos checks read it whole. grpc-js refuses answers over 4 MiB
 * unless told otherwise, and the SDK's own attempt to tell it is spelled so grpc-js ignores it.
 */
const env = workflowEnvPerSuite({ taskQueue: 'large-history-worker', workflowsPath: require.resolve('../../workflows/servicecidr/workflow'), activities: {} });

test('a history of more than 4 MiB is read through a connection with our channel options, and not without them', async () => {
  const address = env().address;
  const ours = await Connection.connect({ address, channelArgs: TEMPORAL_CHANNEL_ARGS });
  // without the SDK's retries, which would try the refused answer again for half a minute
  const plain = await Connection.connect({ address, interceptors: [] });
  try {
    const client = new Client({ connection: ours, dataConverter: DATA_CONVERTER });
    // no worker polls this queue: the signals are only recorded, 50 of 100 KiB each
    const chunk = 'x'.repeat(100 * 1024);
    const handle = await client.workflow.signalWithStart('nobodyRunsThis', {
      workflowId: `large-history-${Date.now()}`, taskQueue: 'nobody-polls-this', signal: 'chunk', signalArgs: [chunk],
    });
    for (let i = 1; i < 50; i++) await handle.signal('chunk', chunk);

    const history = await fetchHistory(client, handle.workflowId);
    expect(history.events?.filter((e) => e.workflowExecutionSignaledEventAttributes).length).toBe(50);
    await expect(new Client({ connection: plain, dataConverter: DATA_CONVERTER }).workflow.getHandle(handle.workflowId).fetchHistory())
      .rejects.toThrow(/larger than max/);
    await handle.terminate('test over');
  } finally {
    await ours.close();
    await plain.close();
  }
}, 120_000);
