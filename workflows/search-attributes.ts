import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes every controller workflow sets, so an object's reconciles can be found
 * in the Web UI or with `temporal workflow list --query "KcmKind='ReplicaSet' AND KcmName='web'"`.
 * Prefixed because bare names like `Namespace` collide with Temporal's own vocabulary.
 */
export const SA_CONTROLLER = defineSearchAttributeKey('KcmController', SearchAttributeType.KEYWORD);
export const SA_KIND = defineSearchAttributeKey('KcmKind', SearchAttributeType.KEYWORD);
export const SA_NAMESPACE = defineSearchAttributeKey('KcmNamespace', SearchAttributeType.KEYWORD);
export const SA_NAME = defineSearchAttributeKey('KcmName', SearchAttributeType.KEYWORD);
export const SA_UID = defineSearchAttributeKey('KcmUid', SearchAttributeType.KEYWORD);
/** Set while an object's reconciles keep failing (the error text), removed by the next success. */
export const SA_LAST_ERROR = defineSearchAttributeKey('KcmLastError', SearchAttributeType.TEXT);

export const KCM_SEARCH_ATTRIBUTES = [SA_CONTROLLER, SA_KIND, SA_NAMESPACE, SA_NAME, SA_UID, SA_LAST_ERROR] as const;
