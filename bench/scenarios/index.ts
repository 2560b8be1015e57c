import { ceiling } from './ceiling';
import { failover } from './failover';
import { idle } from './idle';
import { reaction } from './reaction';
import { restart, restartPartial } from './restart';
import { rollout } from './rollout';
import { scaleUp } from './scale-up';
import { storm } from './storm';
import { Scenario } from './types';

export const SCENARIOS: Scenario[] = [scaleUp, reaction, rollout, failover, restart, idle, ceiling, storm, restartPartial];
