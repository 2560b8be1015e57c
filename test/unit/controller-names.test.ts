import {
  ALIASES,
  ALL_CONTROLLERS,
  CLOUD_PROVIDER_CONTROLLERS,
  DISABLED_BY_DEFAULT,
  UnknownControllerError,
  canonicalControllerName,
  resolveEnabledControllers,
} from '../../starter/controller-names';

describe('controller name tables', () => {
  test('match kube-controller-manager v1.35.4: 50 controllers, 3 off by default, 42 aliases', () => {
    expect(ALL_CONTROLLERS).toHaveLength(50);
    expect(new Set(ALL_CONTROLLERS).size).toBe(50);
    expect([...ALL_CONTROLLERS]).toEqual([...ALL_CONTROLLERS].sort());
    expect(DISABLED_BY_DEFAULT).toEqual(['bootstrap-signer-controller', 'selinux-warning-controller', 'token-cleaner-controller']);
    expect(Object.keys(ALIASES)).toHaveLength(42);
  });

  test('every alias and disabled-by-default name points at a known controller; no alias shadows one', () => {
    for (const c of [...DISABLED_BY_DEFAULT, ...CLOUD_PROVIDER_CONTROLLERS, ...Object.values(ALIASES)]) {
      expect(ALL_CONTROLLERS).toContain(c);
    }
    for (const a of Object.keys(ALIASES)) expect(ALL_CONTROLLERS).not.toContain(a);
  });

  test('canonicalControllerName maps aliases, keeps canonical names, rejects the rest', () => {
    expect(canonicalControllerName('replicaset')).toBe('replicaset-controller');
    expect(canonicalControllerName('replicationcontroller')).toBe('replicationcontroller-controller');
    expect(canonicalControllerName('csrsigning')).toBe('certificatesigningrequest-signing-controller');
    expect(canonicalControllerName('deployment-controller')).toBe('deployment-controller');
    expect(canonicalControllerName('toString')).toBeUndefined();
    expect(canonicalControllerName('nope')).toBeUndefined();
  });
});

describe('resolveEnabledControllers', () => {
  test("'*' enables every controller except the disabled-by-default ones", () => {
    const on = resolveEnabledControllers(['*']);
    expect(on.size).toBe(ALL_CONTROLLERS.length - DISABLED_BY_DEFAULT.length);
    for (const d of DISABLED_BY_DEFAULT) expect(on.has(d)).toBe(false);
    expect(on.has('replicaset-controller')).toBe(true);
  });

  test('a disabled-by-default controller is on only when named', () => {
    const on = resolveEnabledControllers(['*', 'bootstrap-signer-controller', 'tokencleaner']);
    expect(on.has('bootstrap-signer-controller')).toBe(true);
    expect(on.has('token-cleaner-controller')).toBe(true);
    expect(on.has('selinux-warning-controller')).toBe(false);
  });

  test('-name disables, by canonical name or alias', () => {
    const on = resolveEnabledControllers(['*', '-replicaset', '-deployment-controller']);
    expect(on.has('replicaset-controller')).toBe(false);
    expect(on.has('deployment-controller')).toBe(false);
    expect(on.has('job-controller')).toBe(true);
  });

  test('without * only the named controllers run; results are canonical names', () => {
    expect([...resolveEnabledControllers(['replicaset', 'replicationcontroller-controller'])].sort()).toEqual([
      'replicaset-controller',
      'replicationcontroller-controller',
    ]);
    expect(resolveEnabledControllers([]).size).toBe(0);
  });

  test('the first entry naming a controller wins, whichever spelling it uses', () => {
    expect(resolveEnabledControllers(['replicaset', '-replicaset-controller']).has('replicaset-controller')).toBe(true);
    expect(resolveEnabledControllers(['-replicaset', '*', 'replicaset-controller']).has('replicaset-controller')).toBe(false);
  });

  test('unknown names are rejected with upstream wording, all at once', () => {
    expect(() => resolveEnabledControllers(['*', 'foo', '-bar'])).toThrow(UnknownControllerError);
    expect(() => resolveEnabledControllers(['*', 'foo', '-bar'])).toThrow(
      '"foo" is not in the list of known controllers; "bar" is not in the list of known controllers',
    );
    expect(() => resolveEnabledControllers(['-*'])).toThrow('"*" is not in the list of known controllers');
    expect(() => resolveEnabledControllers(['replicaset', ''])).toThrow('"" is not in the list of known controllers');
  });

  test('cloud-provider controllers are accepted as upstream accepts them', () => {
    expect(resolveEnabledControllers(['service']).has('service-lb-controller')).toBe(true);
  });
});
